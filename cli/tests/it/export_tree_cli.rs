//! End-to-end: `cdkd-flow export ExportSiblings --cdk-out <assembly> --local --fast -y`
//! (the binary) migrating a nested tree of real emulator resources into CloudFormation
//! (docs/export.md, "Nested stacks (export-flip, export-adopt)"): a root with a queue of its own and two sibling nested stacks
//! (a topic, a parameter fed the root's queue URL), read from the cloud assembly
//! `tests/fixtures/export/siblings.out/`. The resources' identities come from the three
//! cdkd records the test writes (root, and each child with its parent link), never from
//! the templates, which name nothing.
//!
//! Pinned: the tree ends as CloudFormation stacks holding exactly the physical ids the
//! records named, each child nested in the root (ParentId) with its Outputs, the root with
//! its own; the records and their exports-index entries are gone, no lock is left; the
//! siblings' IMPORT change sets are both created before either import completes, and the
//! root starts only once both children are done. A child whose import fails stops the
//! tree: exit 1, the report names the child and what to redo, every record is kept and
//! every lock released.
//!
//! Run: `scripts/with-emulator.sh cargo test --workspace --test e2e export_tree -- --test-threads=1`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use cdkd_tests as h;
use serde_json::{json, Value};

const REGION: &str = "us-east-1";
pub(crate) const ROOT: &str = "ExportSiblings";
const QUEUE: &str = "WorkQueueE5A3F1C2";
const ALPHA_ID: &str = "AlphaNestedStackAlphaNestedStackResource3E7B1A9C";
const BETA_ID: &str = "BetaNestedStackBetaNestedStackResource8D4C2F6E";
pub(crate) const ALPHA: &str = "ExportSiblings~AlphaNestedStackAlphaNestedStackResource3E7B1A9C";
pub(crate) const BETA: &str = "ExportSiblings~BetaNestedStackBetaNestedStackResource8D4C2F6E";
const TOPIC: &str = "EventsTopic1F6A3B2D";
const PARAM: &str = "QueueUrlParameter9B3E7D14";
const ALPHA_OUTPUT: &str = "ExportSiblingsAlphaEventsTopic1F6A3B2DRef";
const BETA_OUTPUT: &str = "ExportSiblingsBetaQueueUrlParameter9B3E7D14Ref";
/// The SSM parameter the root template's `BootstrapVersion` names (CloudFormation
/// resolves it when a change set is created; `cdk bootstrap` writes it).
const BOOTSTRAP_VERSION: &str = "/cdk-bootstrap/hnb659fds/version";

pub(crate) fn assembly() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/export/siblings.out")
        .to_string_lossy()
        .into_owned()
}

fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

fn state_key(stack: &str) -> String {
    format!("cdkd/{stack}/{REGION}/state.json")
}

const INDEX_KEY: &str = "cdkd/_index/us-east-1/exports.json";

use cdkd_tests::cfn::{client as cfn, outputs, stack_resources};

/// The real emulator resources of one tree, and the CloudFormation names it goes to
/// (unique per test, passed with `--cfn-stack-name` / `--cfn-child-stack-name`).
pub(crate) struct Tree {
    pub(crate) bucket: String,
    pub(crate) run_id: String,
    pub(crate) queue_url: String,
    pub(crate) topic_arn: String,
    pub(crate) param: String,
    pub(crate) root_cfn: String,
    pub(crate) alpha_cfn: String,
    pub(crate) beta_cfn: String,
    /// The records as written, by cdkd stack name.
    records: BTreeMap<String, Value>,
    index: Value,
}

/// Creates the queue, the topic and the parameter, writes the three cdkd records (the
/// root's naming the queue, each child's naming its resource, with `parentStack` /
/// `parentLogicalId`) and an exports index listing the root's export beside another
/// stack's. With `alpha_topic_gone` Alpha's record names a topic that does not exist.
async fn seeded_tree(alpha_topic_gone: bool) -> Tree {
    let bucket = h::fresh_bucket(&h::s3().await).await;
    seeded_tree_in(bucket, alpha_topic_gone).await
}

/// [`seeded_tree`] in the state bucket `bucket` (the deployed backend's).
pub(crate) async fn seeded_tree_in(bucket: String, alpha_topic_gone: bool) -> Tree {
    let sdk = h::sdk().await;
    let tag = uniq("sib").to_lowercase();
    let queue_url = aws_sdk_sqs::Client::new(&sdk)
        .create_queue()
        .queue_name(format!("{tag}-work"))
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    let mut topic_arn = aws_sdk_sns::Client::new(&sdk)
        .create_topic()
        .name(format!("{tag}-events"))
        .send()
        .await
        .unwrap()
        .topic_arn()
        .unwrap()
        .to_string();
    if alpha_topic_gone {
        topic_arn.push_str("-gone");
    }
    let ssm = aws_sdk_ssm::Client::new(&sdk);
    let param = format!("/{tag}/queue-url");
    ssm.put_parameter()
        .name(&param)
        .value(&queue_url)
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    ssm.put_parameter()
        .name(BOOTSTRAP_VERSION)
        .value("21")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .overwrite(true)
        .send()
        .await
        .unwrap();

    let stack_arn = |name: &str, n: u32| {
        format!("arn:aws:cloudformation:{REGION}:123456789012:stack/{name}/0e1d2c3b-4a59-6877-8695-a4b3c2d1e0f{n}")
    };
    let root = json!({
        "version": 10, "stackName": ROOT, "region": REGION,
        "resources": {
            QUEUE: {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url, "properties": {"VisibilityTimeout": 300},
                    "attributes": {"Arn": format!("arn:aws:sqs:{REGION}:123456789012:{tag}-work")},
                    "dependencies": [], "provisionedBy": "sdk"},
            ALPHA_ID: {"resourceType": "AWS::CloudFormation::Stack", "physicalId": stack_arn("ExportSiblings-Alpha", 1),
                       "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"},
            BETA_ID: {"resourceType": "AWS::CloudFormation::Stack", "physicalId": stack_arn("ExportSiblings-Beta", 2),
                      "properties": {}, "attributes": {}, "dependencies": [QUEUE], "provisionedBy": "sdk"},
            "CDKMetadata": {"resourceType": "AWS::CDK::Metadata", "physicalId": "ExportSiblings-CDKMetadata",
                            "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}
        },
        "outputs": {"QueueUrl": queue_url},
        "exportNames": ["QueueUrl"],
        "lastModified": 1796169600000i64
    });
    let alpha = json!({
        "version": 10, "stackName": ALPHA, "region": REGION,
        "resources": {
            TOPIC: {"resourceType": "AWS::SNS::Topic", "physicalId": topic_arn, "properties": {"DisplayName": "export-siblings events"},
                    "attributes": {}, "dependencies": [], "provisionedBy": "sdk"},
            "CDKMetadata": {"resourceType": "AWS::CDK::Metadata", "physicalId": "ExportSiblings-Alpha-CDKMetadata",
                            "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}
        },
        "outputs": {ALPHA_OUTPUT: topic_arn},
        "lastModified": 1796169600000i64,
        "parentStack": ROOT, "parentLogicalId": ALPHA_ID
    });
    let beta = json!({
        "version": 10, "stackName": BETA, "region": REGION,
        "resources": {
            PARAM: {"resourceType": "AWS::SSM::Parameter", "physicalId": param,
                    "properties": {"Type": "String", "Value": queue_url}, "attributes": {},
                    "dependencies": [], "provisionedBy": "sdk"},
            "CDKMetadata": {"resourceType": "AWS::CDK::Metadata", "physicalId": "ExportSiblings-Beta-CDKMetadata",
                            "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}
        },
        "outputs": {BETA_OUTPUT: param},
        "lastModified": 1796169600000i64,
        "parentStack": ROOT, "parentLogicalId": BETA_ID
    });
    // As a cdkd deploy leaves it: the root's export, and another stack's.
    let index = json!({"indexVersion": 1, "region": REGION, "exports": {
        "QueueUrl": {"value": queue_url, "producerStack": ROOT, "producerRegion": REGION},
        "OtherTopic": {"value": "arn:aws:sns:us-east-1:123456789012:other", "producerStack": "OtherStack", "producerRegion": REGION}
    }, "lastModified": 1796169600000i64});

    let s3 = h::s3().await;
    let mut records = BTreeMap::new();
    for (name, rec) in [(ROOT, root), (ALPHA, alpha), (BETA, beta)] {
        h::put_raw(
            &s3,
            &bucket,
            &state_key(name),
            serde_json::to_vec(&rec).unwrap(),
        )
        .await;
        records.insert(name.to_string(), rec);
    }
    h::put_raw(&s3, &bucket, INDEX_KEY, serde_json::to_vec(&index).unwrap()).await;
    let root_cfn = uniq("ExportSiblings");
    Tree {
        bucket,
        run_id: uniq("export-siblings-"),
        queue_url,
        topic_arn,
        param,
        alpha_cfn: format!("{root_cfn}-Alpha"),
        beta_cfn: format!("{root_cfn}-Beta"),
        root_cfn,
        records,
        index,
    }
}

/// `export ExportSiblings --cdk-out <assembly> --local --fast -y --run-id <id>`, to the
/// tree's CloudFormation names. Returns the run and how long it took.
fn migrate(t: &Tree) -> (h::CliRun, std::time::Duration) {
    migrate_from(t, &assembly())
}

/// [`migrate`] from the cloud assembly at `out`.
fn migrate_from(t: &Tree, out: &str) -> (h::CliRun, std::time::Duration) {
    let args = export_args(t, out);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let started = Instant::now();
    let run = crate::run_cli_env(&args, &[]);
    (run, started.elapsed())
}

/// The arguments of [`migrate_from`].
pub(crate) fn export_args(t: &Tree, out: &str) -> Vec<String> {
    let alpha = format!("{ALPHA}={}", t.alpha_cfn);
    let beta = format!("{BETA}={}", t.beta_cfn);
    [
        "--state-bucket",
        &t.bucket,
        "export",
        ROOT,
        "--cdk-out",
        out,
        "--cfn-stack-name",
        &t.root_cfn,
        "--cfn-child-stack-name",
        &alpha,
        "--cfn-child-stack-name",
        &beta,
        "--run-id",
        &t.run_id,
        "--local",
        "--fast",
        "-y",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

/// A CloudFormation stack as DescribeStacks answers it (it must exist).
async fn described(name: &str) -> aws_sdk_cloudformation::types::Stack {
    cdkd_tests::cfn::described(name)
        .await
        .unwrap_or_else(|| panic!("DescribeStacks {name}: no such stack"))
}

async fn cfn_stack_exists(name: &str) -> bool {
    match cfn().await.describe_stacks().stack_name(name).send().await {
        Ok(o) => !o.stacks().is_empty(),
        Err(e) => {
            let text = format!("{e:?}");
            assert!(
                text.contains("does not exist"),
                "DescribeStacks {name}: {text}"
            );
            false
        }
    }
}

async fn progress(t: &Tree) -> Value {
    let s3 = h::s3().await;
    let key = format!("cdkd/_runs/{}/progress.json", t.run_id);
    let text = h::get_text(&s3, &t.bucket, &key)
        .await
        .unwrap_or_else(|| panic!("no {key}"));
    serde_json::from_str(&text).unwrap()
}

/// The position in the run's log of its only line that `matches`.
fn log_line(log: &[String], what: &str, matches: impl Fn(&str) -> bool) -> usize {
    let found: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, l)| matches(l))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(found.len(), 1, "one log line for {what}: {log:#?}");
    found[0]
}

fn import_created(log: &[String], cfn_name: &str) -> usize {
    let tail = format!(" on {cfn_name}");
    log_line(log, &format!("the IMPORT change set of {cfn_name}"), |l| {
        l.starts_with("import: created change set cdkd-migrate-") && l.ends_with(&tail)
    })
}

fn reached(log: &[String], cfn_name: &str, status: &str) -> usize {
    let line = format!("poll: {cfn_name} reached {status}");
    log_line(log, &line, |l| l == line)
}

/// The rules of docs/export.md, "Nested stacks (export-flip, export-adopt)" on a whole run through the CLI: the root and both siblings end as
/// CloudFormation stacks, each holding exactly what its record named, the children
/// nested in the root with their Outputs; the three records and the root's exports-index
/// entry are gone, no lock is left; the siblings' IMPORT change sets were both created
/// before either import completed, and the root's only once both children were done.
#[tokio::test]
async fn export_tree_siblings_migrate_side_by_side_and_the_root_adopts_both_holding_what_the_records_named(
) {
    let t = seeded_tree(false).await;
    let (run, took) = migrate(&t);
    eprintln!("export_tree: the siblings' migration took {took:?}");
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    for (cdkd, cfn_name) in [
        (ALPHA, &t.alpha_cfn),
        (BETA, &t.beta_cfn),
        (ROOT, &t.root_cfn),
    ] {
        let line =
            format!("{cdkd} -> CloudFormation stack {cfn_name}: migrated; cdkd record deleted");
        assert!(run.stdout.contains(&line), "{line}\n{}", run.stdout);
    }

    // The root holds its queue and both children, by their stack ids; each child holds
    // its own resource; the children are nested in the root, with their Outputs.
    let root = described(&t.root_cfn).await;
    let root_id = root.stack_id().unwrap().to_string();
    let alpha = described(&t.alpha_cfn).await;
    let beta = described(&t.beta_cfn).await;
    for (name, child) in [(&t.alpha_cfn, &alpha), (&t.beta_cfn, &beta)] {
        assert_eq!(
            child.parent_id(),
            Some(root_id.as_str()),
            "{name} is nested in the root"
        );
        assert_eq!(
            child.root_id(),
            Some(root_id.as_str()),
            "{name}'s root is the root"
        );
    }
    assert_eq!(
        stack_resources(&t.root_cfn).await,
        BTreeMap::from([
            (QUEUE.to_string(), t.queue_url.clone()),
            (ALPHA_ID.to_string(), alpha.stack_id().unwrap().to_string()),
            (BETA_ID.to_string(), beta.stack_id().unwrap().to_string()),
        ]),
        "the root's resources"
    );
    assert_eq!(
        stack_resources(&t.alpha_cfn).await,
        BTreeMap::from([(TOPIC.to_string(), t.topic_arn.clone())]),
        "Alpha's resources"
    );
    assert_eq!(
        stack_resources(&t.beta_cfn).await,
        BTreeMap::from([(PARAM.to_string(), t.param.clone())]),
        "Beta's resources"
    );
    assert_eq!(
        BTreeMap::from_iter(outputs(&alpha)),
        BTreeMap::from([(ALPHA_OUTPUT.to_string(), t.topic_arn.clone())])
    );
    assert_eq!(
        BTreeMap::from_iter(outputs(&beta)),
        BTreeMap::from([(BETA_OUTPUT.to_string(), t.param.clone())])
    );
    assert_eq!(
        BTreeMap::from_iter(outputs(&root)),
        BTreeMap::from([("QueueUrl".to_string(), t.queue_url.clone())])
    );
    // Beta got the root's queue URL as its parameter (resolved from the root's record).
    let params: BTreeMap<_, _> = beta
        .parameters()
        .iter()
        .map(|p| {
            (
                p.parameter_key().unwrap_or_default().to_string(),
                p.parameter_value().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        params.get("referencetoExportSiblingsWorkQueueE5A3F1C2Ref"),
        Some(&t.queue_url),
        "{params:?}"
    );

    // The records, their locks and the root's exports-index entry are gone.
    let s3 = h::s3().await;
    let keys = h::list_all_keys(&s3, &t.bucket).await;
    for stack in [ROOT, ALPHA, BETA] {
        assert!(!keys.contains(&state_key(stack)), "{stack}: {keys:?}");
    }
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    let index: Value =
        serde_json::from_str(&h::get_text(&s3, &t.bucket, INDEX_KEY).await.unwrap()).unwrap();
    let mut left = t.index["exports"].clone();
    left.as_object_mut().unwrap().remove("QueueUrl");
    assert_eq!(
        index["exports"], left,
        "only the other stack's export is left"
    );

    // Siblings side by side: both IMPORT change sets created before either child's
    // import completed; the root's IMPORT only once both children were done.
    let p = progress(&t).await;
    let log: Vec<String> = serde_json::from_value(p["log"].clone()).unwrap();
    let created = [
        import_created(&log, &t.alpha_cfn),
        import_created(&log, &t.beta_cfn),
    ];
    let imported = [
        reached(&log, &t.alpha_cfn, "IMPORT_COMPLETE"),
        reached(&log, &t.beta_cfn, "IMPORT_COMPLETE"),
    ];
    assert!(
        created.iter().max() < imported.iter().min(),
        "both change sets before either import completed: {log:#?}"
    );
    let children_done = [
        reached(&log, &t.alpha_cfn, "UPDATE_COMPLETE"),
        reached(&log, &t.beta_cfn, "UPDATE_COMPLETE"),
    ];
    let root_created = import_created(&log, &t.root_cfn);
    assert!(
        children_done.iter().all(|&i| i < root_created),
        "the root starts once both children are done: {log:#?}"
    );
    let adopt = "adopt: created change set cdkd-adopt-";
    let adopted = log_line(&log, "the root's adoption", |l| {
        l.starts_with(adopt) && l.ends_with(&format!(" on {} (2 nested stack(s))", t.root_cfn))
    });
    assert!(
        root_created < adopted,
        "1A, then 1B adopting both: {log:#?}"
    );
    let stages: Vec<(&str, &str)> = p["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["stack"].as_str().unwrap(), s["stage"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stages,
        [(ALPHA, "cleaned"), (BETA, "cleaned"), (ROOT, "cleaned")],
        "leaf first, siblings in template order"
    );
    let report = h::get_text(
        &s3,
        &t.bucket,
        &format!("cdkd/_runs/{}/report.json", t.run_id),
    )
    .await
    .expect("report.json");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["outcome"], "migrated", "{report}");
}

/// docs/export.md, "Nested stacks (export-flip, export-adopt)": the parent's nested row keeps every property
/// the parent template declares. Alpha's row declares its own Tags and TimeoutInMinutes;
/// the child stack carries the row's tags from its import on, so the adoption matches,
/// and the root's template in CloudFormation keeps the row's properties.
#[tokio::test]
async fn export_tree_nested_rows_keep_their_own_tags_and_properties_through_adoption_and_phase2() {
    let t = seeded_tree(false).await;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(uniq("siblings-tagged"));
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(assembly()).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let root_file = dir.join("ExportSiblings.template.json");
    let mut root: Value = serde_json::from_slice(&std::fs::read(&root_file).unwrap()).unwrap();
    let props = &mut root["Resources"][ALPHA_ID]["Properties"];
    props["Tags"] = json!([{"Key": "team", "Value": "data"}]);
    props["TimeoutInMinutes"] = json!(30);
    std::fs::write(&root_file, serde_json::to_vec(&root).unwrap()).unwrap();

    let (run, _) = migrate_from(&t, &dir.to_string_lossy());
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let alpha = described(&t.alpha_cfn).await;
    let tags: BTreeMap<String, String> = alpha
        .tags()
        .iter()
        .map(|t| {
            (
                t.key().unwrap_or_default().to_string(),
                t.value().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        tags.get("team").map(String::as_str),
        Some("data"),
        "{tags:?}"
    );
    let body = cfn()
        .await
        .get_template()
        .stack_name(&t.root_cfn)
        .send()
        .await
        .unwrap()
        .template_body()
        .unwrap_or_default()
        .to_string();
    let template: Value = serde_json::from_str(&body).unwrap();
    let row = &template["Resources"][ALPHA_ID]["Properties"];
    assert_eq!(row["TimeoutInMinutes"], json!(30), "{row}");
    let row_tags = row["Tags"].as_array().unwrap();
    assert_eq!(
        row_tags[0],
        json!({"Key": "team", "Value": "data"}),
        "{row}"
    );
    assert_eq!(
        template["Resources"][ALPHA_ID]["DeletionPolicy"], "Retain",
        "{template}"
    );
}

/// A failure in one child stops the whole tree (docs/export.md, "Cleanup" and "Failure (export-abort)"): Alpha's
/// record names a topic that does not exist, so its IMPORT change set fails; the run
/// exits 1, the report names Alpha, its CloudFormation stack (deleted by the run: its
/// import left it empty) and what to redo, every
/// record of the tree is kept as it was (none migrated, none deleted), the exports index
/// is untouched, the locks are released and the root is never submitted.
#[tokio::test]
async fn export_tree_a_failing_child_keeps_every_record_releases_the_locks_and_names_the_child_to_redo(
) {
    let t = seeded_tree(true).await;
    let (run, took) = migrate(&t);
    eprintln!("export_tree: the failing tree took {took:?}");
    assert_eq!(
        run.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let alpha_line = format!("{ALPHA} -> CloudFormation stack {}: ", t.alpha_cfn);
    assert!(
        run.stdout.contains(&alpha_line),
        "{alpha_line}\n{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "Cause: ChangeSetFailed: export of {ALPHA} to CloudFormation stack {}: IMPORT change set FAILED: Resource {TOPIC} (AWS::SNS::Topic) with identifier {{TopicArn={}}} does not exist",
            t.alpha_cfn, t.topic_arn
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "  - {ALPHA}: its phase-1 IMPORT failed, and the run deleted the empty CloudFormation stack {} it had created (it held none of the resources); the cdkd record is unchanged",
            t.alpha_cfn
        )),
        "the report says what to redo for Alpha:\n{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("delete-stack"),
        "no command deletes a stack: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "{ROOT} -> CloudFormation stack {}: nothing submitted",
            t.root_cfn
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(&format!("export {ROOT} failed")),
        "{}",
        run.stderr
    );
    assert!(
        !cfn_stack_exists(&t.root_cfn).await,
        "the root is never submitted while a child failed"
    );
    // The empty stack the failed import left is gone: the record alone owns Alpha's
    // resources, and the export can simply be run again (docs/export.md, "Failure (export-abort)").
    let alpha = cfn()
        .await
        .describe_stacks()
        .stack_name(&t.alpha_cfn)
        .send()
        .await
        .ok()
        .and_then(|o| {
            o.stacks()
                .first()
                .and_then(|s| s.stack_status().map(|x| x.as_str().to_string()))
        });
    assert!(
        alpha.is_none() || alpha.as_deref() == Some("DELETE_COMPLETE"),
        "the run withdrew Alpha's empty stack: {alpha:?}"
    );

    // Every record kept byte for byte, the index untouched, no lock left.
    let s3 = h::s3().await;
    for (stack, rec) in &t.records {
        let (body, _) = h::get_raw(&s3, &t.bucket, &state_key(stack))
            .await
            .unwrap_or_else(|| panic!("the record of {stack} is kept"));
        assert_eq!(
            &serde_json::from_slice::<Value>(&body).unwrap(),
            rec,
            "{stack}"
        );
    }
    let index: Value =
        serde_json::from_str(&h::get_text(&s3, &t.bucket, INDEX_KEY).await.unwrap()).unwrap();
    assert_eq!(index, t.index, "the exports index is untouched");
    let keys = h::list_all_keys(&s3, &t.bucket).await;
    assert!(!keys.iter().any(|k| k.ends_with("lock.json")), "{keys:?}");
    let report = h::get_text(
        &s3,
        &t.bucket,
        &format!("cdkd/_runs/{}/report.json", t.run_id),
    )
    .await
    .expect("report.json");
    let report: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["outcome"], "failed", "{report}");
    for s in report["stacks"].as_array().unwrap() {
        assert_eq!(s["recordDeleted"], false, "{report}");
    }
}

/// Writes `stack`'s lock as a local export run `run_id` of process `pid` on this host
/// holds it.
async fn write_run_lock(t: &Tree, stack: &str, pid: u32) {
    let now = h::now_ms();
    let owner =
        cdkd_core::lock::local_flow_owner(&t.run_id, &crate::export_resume_cli::host_name(), pid);
    let body = h::cdkd_lock_body(&owner, now, now + 1_800_000, Some("export"));
    let key = format!("cdkd/{stack}/{REGION}/lock.json");
    h::put_raw(&h::s3().await, &t.bucket, &key, body.into_bytes()).await;
}

/// A run stopped between two lock writes leaves a child's lock held by an ended process
/// while the root's is gone (its cleanup released the root's first) or held by another
/// ended process (a resume killed while it took the locks over). The same command resumes
/// the run, replacing every lock of the tree an ended run of it holds, and ends it
/// migrated with no lock left (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"). Before, the resume failed on the
/// child's lock and told the user to run the same command again, which failed the same
/// way until the lock expired.
#[tokio::test]
async fn same_command_same_run_a_tree_stopped_between_its_lock_writes_resumes_taking_over_every_ended_holder(
) {
    let t = seeded_tree(false).await;
    let (run, _) = migrate(&t);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s3 = h::s3().await;
    let report = format!("cdkd/_runs/{}/report.json", t.run_id);
    let dead = crate::export_resume_cli::dead_pid;
    // The cleanup stopped after releasing the root's lock; then a resume stopped after
    // taking the root's lock over; last, a migrated run whose release of the children's
    // locks failed (its report written): the same command releases what it left.
    for (root_held, report_written) in [(false, false), (true, false), (false, true)] {
        let when = match (root_held, report_written) {
            (_, true) => "migrated, children's locks left",
            (true, _) => "root held by another ended process",
            _ => "root released",
        };
        if !report_written {
            s3.delete_object()
                .bucket(&t.bucket)
                .key(&report)
                .send()
                .await
                .unwrap();
        }
        write_run_lock(&t, ALPHA, dead()).await;
        write_run_lock(&t, BETA, dead()).await;
        if root_held {
            write_run_lock(&t, ROOT, dead()).await;
        }
        let (again, _) = migrate(&t);
        assert_eq!(
            again.code, 0,
            "{when}: stdout:\n{}\nstderr:\n{}",
            again.stdout, again.stderr
        );
        let said: &[&str] = if report_written {
            &["nothing to do", "released the lock of"]
        } else {
            &["resuming run"]
        };
        for line in said {
            assert!(again.stderr.contains(line), "{when}: {}", again.stderr);
        }
        assert!(
            again.stdout.contains("migrated"),
            "{when}: {}",
            again.stdout
        );
        let keys = h::list_all_keys(&s3, &t.bucket).await;
        assert!(
            !keys.iter().any(|k| k.ends_with("lock.json")),
            "{when}: a lock is left: {keys:?}"
        );
        assert!(keys.contains(&report), "{when}: {keys:?}");
        assert_tree_owned(&t, when).await;
    }
}

/// Every resource of the tree exists and is owned by its cdkd record or by the
/// CloudFormation stack it is exported into (never by neither).
async fn assert_tree_owned(t: &Tree, when: &str) {
    let s3 = h::s3().await;
    for (record, cfn_name, logical) in [
        (ROOT, t.root_cfn.as_str(), QUEUE),
        (ALPHA, t.alpha_cfn.as_str(), TOPIC),
        (BETA, t.beta_cfn.as_str(), PARAM),
    ] {
        let in_record = match h::get_raw(&s3, &t.bucket, &state_key(record)).await {
            Some((body, _)) => serde_json::from_slice::<Value>(&body).unwrap()["resources"]
                .get(logical)
                .is_some(),
            None => false,
        };
        let in_cfn = cdkd_tests::cfn::described(cfn_name).await.is_some()
            && stack_resources(cfn_name).await.contains_key(logical);
        assert!(
            in_record || in_cfn,
            "{when}: {record}'s {logical} is owned by neither"
        );
    }
    let sdk = h::sdk().await;
    assert!(
        h::fixtures::queue_exists(&sdk, &t.queue_url).await,
        "{when}: the queue was deleted"
    );
    assert!(
        h::fixtures::topic_exists(&sdk, &t.topic_arn).await,
        "{when}: the topic was deleted"
    );
    assert!(
        h::fixtures::parameter_exists(&sdk, &t.param).await,
        "{when}: the parameter was deleted"
    );
}

/// The crash test of a two-level tree through the CLI
/// (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): the local export of a root and two nested children killed (SIGKILL) at seeded
/// random points across the whole run, then the same command again. After each kill
/// every resource exists and is owned; every run completes migrated, with no record and
/// no lock left. 8 seeds in `make test`; `CDKD_FLOW_CRASH_SEEDS=200` runs 50.
#[tokio::test]
async fn crash_export_tree_killed_at_seeded_random_points_resumes_with_nothing_lost() {
    let seeds: u64 = std::env::var("CDKD_FLOW_CRASH_SEEDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(|n| (n / 4).max(1))
        .unwrap_or(8);
    let cal = seeded_tree(false).await;
    let (run, span) = migrate(&cal);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let span = span.as_millis() as u64;
    let s3 = h::s3().await;
    let mut phases: BTreeMap<String, u32> = BTreeMap::new();
    let mut resumed = 0;
    for seed in 0..seeds {
        let t = seeded_tree(false).await;
        let mut rng = (seed + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        rng ^= rng >> 29;
        // Stratified: seed k is killed in the k-th slice of the run, at a random point.
        let slice = (span / seeds).max(1);
        let at = slice * seed + rng % slice;
        let args = export_args(&t, &assembly());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = crate::cli_command(&args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(at)).await;
        let _ = child.kill();
        let _ = child.wait();
        let key = format!("cdkd/_runs/{}/progress.json", t.run_id);
        let phase = match h::get_text(&s3, &t.bucket, &key).await {
            Some(p) => {
                let p: Value = serde_json::from_str(&p).unwrap();
                p["log"]
                    .as_array()
                    .and_then(|l| l.last())
                    .and_then(Value::as_str)
                    .map(|l| l.split(':').next().unwrap_or("").to_string())
                    .unwrap_or_else(|| "locked".into())
            }
            None => "planning".into(),
        };
        *phases.entry(phase.clone()).or_default() += 1;
        let when = format!("tree seed {seed}, killed at {at} ms ({phase})");
        assert_tree_owned(&t, &when).await;
        let (again, _) = migrate(&t);
        assert_eq!(
            again.code, 0,
            "{when}: stdout:\n{}\nstderr:\n{}",
            again.stdout, again.stderr
        );
        if again.stderr.contains("resuming run") {
            resumed += 1;
        }
        assert_tree_owned(&t, &when).await;
        let keys = h::list_all_keys(&s3, &t.bucket).await;
        for name in [ROOT, ALPHA, BETA] {
            assert!(
                !keys.contains(&state_key(name)),
                "{when}: {name}'s record is left: {keys:?}"
            );
        }
        assert!(
            !keys.iter().any(|k| k.ends_with("lock.json")),
            "{when}: a lock is left: {keys:?}"
        );
        let root = stack_resources(&t.root_cfn).await;
        assert!(
            root.contains_key(QUEUE) && root.contains_key(ALPHA_ID) && root.contains_key(BETA_ID),
            "{when}: {root:?}"
        );
    }
    eprintln!(
        "crash-export (tree): {seeds} seeds over {span} ms, kill points by last step {phases:?}, {resumed} resumed, 0 resources lost, 0 locks left"
    );
}
