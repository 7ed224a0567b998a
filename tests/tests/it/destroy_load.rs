//! The one loader of a destroy's stack tree (`cdkd_functions::destroy::load`), which the
//! `destroy-plan` step and the CLI's dry run both call. Each test is named after the
//! rule it pins; several rules are where the step's and the CLI's former copies
//! disagreed.

use cdkd_functions::destroy::load::{consumers, load_tree, LoadError, StackTree};
use cdkd_tests::{fresh_bucket, put_raw, s3, store};

const REGION: &str = "us-east-1";

fn record(stack: &str, extra: &str) -> String {
    format!(
        r#"{{"version":10,"stackName":"{stack}","region":"{REGION}","resources":{{}},"outputs":{{}}{extra}}}"#
    )
}

/// A producer `P` that exports `X`, and `consumer`s importing it.
fn producer() -> String {
    format!(
        r#"{{"version":10,"stackName":"P","region":"{REGION}","resources":{{"Q":{{"resourceType":"AWS::SQS::Queue","physicalId":"q","dependencies":[]}}}},"outputs":{{"O":{{"value":"v","exportName":"X"}}}}}}"#
    )
}

fn consumer(stack: &str) -> String {
    record(
        stack,
        &format!(
            r#","imports":[{{"sourceStack":"P","sourceRegion":"{REGION}","exportName":"X"}}]"#
        ),
    )
}

async fn put(s3: &aws_sdk_s3::Client, bucket: &str, stack: &str, body: String) {
    put_raw(
        s3,
        bucket,
        &format!("cdkd/{stack}/{REGION}/state.json"),
        body,
    )
    .await;
}

fn names(tree: &StackTree) -> Vec<&str> {
    tree.records.iter().map(|(s, _)| s.as_str()).collect()
}

#[tokio::test]
async fn a_missing_record_is_refused_naming_its_state_location() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let e = load_tree(&store(&s3, &bucket), "Nope", Some(REGION))
        .await
        .unwrap_err();
    match e {
        LoadError::Refused { region, message } => {
            assert_eq!(region.as_deref(), Some(REGION));
            assert_eq!(
                message,
                format!("No state found for stack 'Nope' ({REGION}) in s3://{bucket}/cdkd/. Run 'cdkd-flow state list' to see available stacks.")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_damaged_record_refuses_with_its_region() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put(&s3, &bucket, "Bad", "{not json".to_string()).await;
    match load_tree(&store(&s3, &bucket), "Bad", None)
        .await
        .unwrap_err()
    {
        LoadError::Refused { region, .. } => assert_eq!(region.as_deref(), Some(REGION)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_bucket_that_cannot_be_read_is_an_error_not_a_refusal() {
    let s3 = s3().await;
    let missing = cdkd_tests::unique_bucket_name("missing");
    match load_tree(&store(&s3, &missing), "App", Some(REGION))
        .await
        .unwrap_err()
    {
        LoadError::Store(_) => {}
        other => panic!("a read failure must stop the command, not refuse one stack: {other:?}"),
    }
}

#[tokio::test]
async fn nested_children_load_before_their_parent() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    let nested = |ids: &[&str]| {
        ids.iter()
            .map(|id| {
                format!(
                    r#""{id}":{{"resourceType":"AWS::CloudFormation::Stack","physicalId":"arn"}}"#
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let with = |stack: &str, ids: &[&str]| {
        format!(
            r#"{{"version":10,"stackName":"{stack}","region":"{REGION}","resources":{{{}}},"outputs":{{}}}}"#,
            nested(ids)
        )
    };
    put(&s3, &bucket, "P", with("P", &["A", "Gone"])).await;
    put(&s3, &bucket, "P~A", with("P~A", &["B"])).await;
    put(&s3, &bucket, "P~A~B", record("P~A~B", "")).await;
    let tree = load_tree(&store(&s3, &bucket), "P", None).await.unwrap();
    assert_eq!(tree.region, REGION);
    // A row whose child record is missing loads nothing (the row deletes as gone).
    assert_eq!(names(&tree), ["P~A~B", "P~A", "P"]);
}

#[tokio::test]
async fn the_consumer_scan_returns_consumers_in_listing_order() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put(&s3, &bucket, "P", producer()).await;
    let mut expected = Vec::new();
    for i in 0..24 {
        let c = format!("C{i:02}");
        put(&s3, &bucket, &c, consumer(&c)).await;
        expected.push(c);
    }
    let st = store(&s3, &bucket);
    let tree = load_tree(&st, "P", None).await.unwrap();
    let found = consumers(&st, &tree, &[]).await.unwrap();
    let found: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(found, expected);
}

#[tokio::test]
async fn stacks_destroyed_earlier_in_the_command_are_left_out_of_the_consumer_scan() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put(&s3, &bucket, "P", producer()).await;
    put(&s3, &bucket, "C1", consumer("C1")).await;
    put(&s3, &bucket, "C2", consumer("C2")).await;
    let st = store(&s3, &bucket);
    let tree = load_tree(&st, "P", None).await.unwrap();
    let found = consumers(&st, &tree, &["C1".to_string()]).await.unwrap();
    let found: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(found, ["C2"]);
}

#[tokio::test]
async fn a_stack_that_exports_nothing_reads_no_other_record() {
    let s3 = s3().await;
    let bucket = fresh_bucket(&s3).await;
    put(&s3, &bucket, "P", record("P", "")).await;
    put(&s3, &bucket, "C1", consumer("C1")).await;
    let st = store(&s3, &bucket);
    let tree = load_tree(&st, "P", None).await.unwrap();
    assert!(consumers(&st, &tree, &[]).await.unwrap().is_empty());
}
