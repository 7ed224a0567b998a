//! The destroy workflow end to end on the emulator, run by the engine exactly as Step
//! Functions would run `statemachines/destroy.asl.json`: real emulator resources are
//! deleted, dependents first; the state record, its nested child and the locks are gone;
//! report.json says what happened; the exports index no longer lists the stack.
//!
//! Run: `scripts/with-emulator.sh cargo test -p cdkd-tests --test destroy_e2e`.

use std::sync::Arc;

use aws_config::SdkConfig;
use cdkd_engine::{Engine, EngineOptions, Outcome, StateMachine};
use cdkd_functions::destroy::finish::RunReport;
use cdkd_functions::local::LocalSteps;
use cdkd_functions::{definitions, runs, Deps};
use cdkd_tests as h;
use serde_json::{json, Map, Value};

async fn deps(sdk: &SdkConfig) -> Deps {
    let mut d = Deps::from_sdk(sdk.clone(), None).await;
    d.budgets.inline_wait = std::time::Duration::from_millis(200);
    d
}

async fn run_destroy(deps: &Deps, input: Value, run_id: &str) -> Outcome {
    let sm = StateMachine::load(definitions::DESTROY, &definitions::local_substitutions())
        .expect("definition loads");
    let engine = Engine::new(
        Arc::new(LocalSteps::new(deps.clone())),
        EngineOptions {
            time_scale: 0.0,
            ..EngineOptions::default()
        },
    );
    engine.run_named(&sm, input, run_id).await
}

fn uniq(tag: &str) -> String {
    format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..10])
}

fn res(id: &str, ty: &str, props: Value, deps: &[&str]) -> (String, Value) {
    (
        id.to_string(),
        json!({"physicalId": id, "resourceType": ty, "properties": props, "dependencies": deps, "provisionedBy": "sdk"}),
    )
}

/// Creates ~15 real resources in the emulator and returns the record of a parent stack
/// (with a nested child record) as cdkd would have written them.
struct Seeded {
    parent: Map<String, Value>,
    child: Map<String, Value>,
    topics: Vec<String>,
    queues: Vec<String>,
    buckets: Vec<String>,
    params: Vec<String>,
    role: String,
    tables: Vec<String>,
    log_groups: Vec<String>,
}

async fn seed(sdk: &SdkConfig, stack: &str) -> Seeded {
    let sns = aws_sdk_sns::Client::new(sdk);
    let sqs = aws_sdk_sqs::Client::new(sdk);
    let s3 = cdkd_aws::config::s3_client(sdk);
    let ssm = aws_sdk_ssm::Client::new(sdk);
    let iam = aws_sdk_iam::Client::new(sdk);
    let ddb = aws_sdk_dynamodb::Client::new(sdk);
    let logs = aws_sdk_cloudwatchlogs::Client::new(sdk);
    let mut resources: Vec<(String, Value)> = Vec::new();
    let mut s = Seeded {
        parent: Map::new(),
        child: Map::new(),
        topics: vec![],
        queues: vec![],
        buckets: vec![],
        params: vec![],
        role: uniq("role"),
        tables: vec![],
        log_groups: vec![],
    };
    for i in 0..2 {
        let arn = sns
            .create_topic()
            .name(uniq("topic"))
            .send()
            .await
            .unwrap()
            .topic_arn
            .unwrap();
        let mut r = res(&format!("Topic{i}"), "AWS::SNS::Topic", json!({}), &[]);
        r.1["physicalId"] = json!(arn);
        s.topics.push(arn);
        resources.push(r);
        let url = sqs
            .create_queue()
            .queue_name(uniq("queue"))
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let mut r = res(
            &format!("Queue{i}"),
            "AWS::SQS::Queue",
            json!({}),
            &[&format!("Topic{i}")],
        );
        r.1["physicalId"] = json!(url);
        s.queues.push(url);
        resources.push(r);
        let b = h::unique_bucket_name("asset");
        s3.create_bucket().bucket(&b).send().await.unwrap();
        let mut r = res(&format!("Bucket{i}"), "AWS::S3::Bucket", json!({}), &[]);
        r.1["physicalId"] = json!(b);
        s.buckets.push(b);
        resources.push(r);
        let t = uniq("table");
        cdkd_tests::fixtures::pk_table(&ddb, &t, false).await;
        let mut r = res(&format!("Table{i}"), "AWS::DynamoDB::Table", json!({}), &[]);
        r.1["physicalId"] = json!(t);
        s.tables.push(t);
        resources.push(r);
        let lg = format!("/cdkd-flow/{}", uniq("logs"));
        logs.create_log_group()
            .log_group_name(&lg)
            .send()
            .await
            .unwrap();
        let mut r = res(&format!("Logs{i}"), "AWS::Logs::LogGroup", json!({}), &[]);
        r.1["physicalId"] = json!(lg);
        s.log_groups.push(lg);
        resources.push(r);
    }
    let p = format!("/cdkd-flow/{}", uniq("param"));
    ssm.put_parameter()
        .name(&p)
        .value("v")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    let mut r = res(
        "Param",
        "AWS::SSM::Parameter",
        json!({}),
        &["Queue0", "Queue1"],
    );
    r.1["physicalId"] = json!(p);
    s.params.push(p);
    resources.push(r);
    let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]});
    iam.create_role()
        .role_name(&s.role)
        .assume_role_policy_document(trust.to_string())
        .send()
        .await
        .unwrap();
    let doc = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}]});
    iam.put_role_policy()
        .role_name(&s.role)
        .policy_name("HandlerPolicy")
        .policy_document(doc.to_string())
        .send()
        .await
        .unwrap();
    let mut r = res("HandlerRole", "AWS::IAM::Role", json!({}), &[]);
    r.1["physicalId"] = json!(s.role);
    resources.push(r);
    let mut r = res(
        "HandlerPolicy",
        "AWS::IAM::Policy",
        json!({"PolicyName": "HandlerPolicy", "PolicyDocument": doc, "Roles": [s.role]}),
        &["HandlerRole", "Queue0"],
    );
    r.1["physicalId"] = json!("HandlerPolicy");
    resources.push(r);
    resources.push(res("CDKMetadata", "AWS::CDK::Metadata", json!({}), &[]));
    resources.push(res("Network", "AWS::CloudFormation::Stack", json!({}), &[]));
    s.parent = json!({
        "version": 10, "stackName": stack, "region": "us-east-1",
        "resources": resources.into_iter().collect::<Map<String, Value>>(),
        "outputs": {"TopicArn": s.topics[0]}, "lastModified": 1
    })
    .as_object()
    .cloned()
    .unwrap();

    // The nested child: a queue and a parameter of its own.
    let url = sqs
        .create_queue()
        .queue_name(uniq("childq"))
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    s.queues.push(url.clone());
    let cp = format!("/cdkd-flow/{}", uniq("childparam"));
    ssm.put_parameter()
        .name(&cp)
        .value("v")
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .send()
        .await
        .unwrap();
    s.params.push(cp.clone());
    s.child = json!({
        "version": 10, "stackName": format!("{stack}~Network"), "region": "us-east-1",
        "resources": {
            "ChildQueue": {"physicalId": url, "resourceType": "AWS::SQS::Queue", "properties": {}},
            "ChildParam": {"physicalId": cp, "resourceType": "AWS::SSM::Parameter", "properties": {}, "dependencies": ["ChildQueue"]}
        },
        "outputs": {}, "parentStack": stack, "parentLogicalId": "Network", "parentRegion": "us-east-1", "lastModified": 1
    })
    .as_object()
    .cloned()
    .unwrap();
    s
}

async fn put_record(s3: &aws_sdk_s3::Client, bucket: &str, stack: &str, body: &Map<String, Value>) {
    let key = format!("cdkd/{stack}/us-east-1/state.json");
    h::put_raw(
        s3,
        bucket,
        &key,
        serde_json::to_string_pretty(body).unwrap().as_bytes(),
    )
    .await;
}

#[tokio::test]
async fn destroy_workflow_deletes_a_nested_stack_of_real_resources_and_its_state() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Shop");
    let seeded = seed(&sdk, &stack).await;
    put_record(&s3, &bucket, &stack, &seeded.parent).await;
    put_record(&s3, &bucket, &format!("{stack}~Network"), &seeded.child).await;
    // The exports index lists the stack's output (as cdkd's deploy left it).
    let index = json!({"indexVersion": 1, "region": "us-east-1", "exports": {
        "TopicArn": {"value": seeded.topics[0], "producerStack": stack, "producerRegion": "us-east-1"},
        "Other": {"value": 1, "producerStack": "OtherStack", "producerRegion": "us-east-1"}}, "lastModified": 1});
    h::put_raw(
        &s3,
        &bucket,
        "cdkd/_index/us-east-1/exports.json",
        index.to_string().as_bytes(),
    )
    .await;

    let d = deps(&sdk).await;
    let run_id = uniq("run");
    let out = run_destroy(&d, json!({"stack": stack, "stateBucket": bucket}), &run_id).await;
    let Outcome::Succeeded(output) = out else {
        panic!("destroy failed: {out:?}")
    };
    assert_eq!(output["complete"], json!(true), "{output}");

    // Every resource is gone from the emulator.
    let sns = aws_sdk_sns::Client::new(&sdk);
    let listed = sns.list_topics().send().await.unwrap();
    let live: Vec<String> = listed
        .topics()
        .iter()
        .filter_map(|t| t.topic_arn().map(str::to_string))
        .collect();
    for t in &seeded.topics {
        assert!(!live.contains(t), "topic {t} still exists");
    }
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    for q in &seeded.queues {
        assert!(
            sqs.get_queue_attributes()
                .queue_url(q)
                .send()
                .await
                .is_err(),
            "queue {q} still exists"
        );
    }
    for b in &seeded.buckets {
        assert!(
            s3.head_bucket().bucket(b).send().await.is_err(),
            "bucket {b} still exists"
        );
    }
    let ssm = aws_sdk_ssm::Client::new(&sdk);
    for p in &seeded.params {
        assert!(
            ssm.get_parameter().name(p).send().await.is_err(),
            "parameter {p} still exists"
        );
    }
    let iam = aws_sdk_iam::Client::new(&sdk);
    assert!(
        iam.get_role().role_name(&seeded.role).send().await.is_err(),
        "role still exists"
    );
    let ddb = aws_sdk_dynamodb::Client::new(&sdk);
    for t in &seeded.tables {
        assert!(
            ddb.describe_table().table_name(t).send().await.is_err(),
            "table {t} still exists"
        );
    }
    let logs = aws_sdk_cloudwatchlogs::Client::new(&sdk);
    for lg in &seeded.log_groups {
        let found = logs
            .describe_log_groups()
            .log_group_name_prefix(lg)
            .send()
            .await
            .unwrap();
        assert!(found.log_groups().is_empty(), "log group {lg} still exists");
    }

    // State, locks: gone. Exports index: the stack's entry removed, the other kept.
    let keys = h::list_all_keys(&s3, &bucket).await;
    assert!(
        !keys
            .iter()
            .any(|k| k.ends_with("state.json") || k.ends_with("lock.json")),
        "left: {keys:?}"
    );
    let index = h::get_text(&s3, &bucket, "cdkd/_index/us-east-1/exports.json")
        .await
        .unwrap();
    let index: Value = serde_json::from_str(&index).unwrap();
    assert_eq!(
        index["exports"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["Other"]
    );

    // The report: child first, every row deleted (metadata and nested row included).
    let store = d.store(&bucket, "cdkd").await;
    let report: RunReport = runs::read(&store, &runs::report_key("cdkd", &run_id))
        .await
        .unwrap()
        .unwrap();
    assert!(report.complete);
    assert_eq!(report.stacks.len(), 2);
    assert_eq!(report.stacks[0].stack, format!("{stack}~Network"));
    assert_eq!(report.stacks[0].counts.deleted, 2);
    assert_eq!(
        report.stacks[1].counts.deleted, 15,
        "{:?}",
        report.stacks[1].rows
    );
    assert!(report
        .stacks
        .iter()
        .flat_map(|s| &s.rows)
        .all(|r| r.outcome.label() == "deleted"));
}

#[tokio::test]
async fn destroy_workflow_keeps_what_depends_on_a_failure_and_reports_it() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Partial");
    // A bucket that is not empty cannot be deleted: the queue it depends on... rather,
    // the queue that must go after it stays (blocked); the independent topic goes.
    let full = h::unique_bucket_name("full");
    s3.create_bucket().bucket(&full).send().await.unwrap();
    h::put_raw(&s3, &full, "object.txt", b"data").await;
    let sqs = aws_sdk_sqs::Client::new(&sdk);
    let url = sqs
        .create_queue()
        .queue_name(uniq("q"))
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let sns = aws_sdk_sns::Client::new(&sdk);
    let topic = sns
        .create_topic()
        .name(uniq("t"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let record = json!({"version": 10, "stackName": stack, "region": "us-east-1", "resources": {
        "Full": {"physicalId": full, "resourceType": "AWS::S3::Bucket", "properties": {}, "dependencies": ["Queue"]},
        "Queue": {"physicalId": url, "resourceType": "AWS::SQS::Queue", "properties": {}},
        "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {}}
    }, "outputs": {}});
    put_record(&s3, &bucket, &stack, record.as_object().unwrap()).await;

    let d = deps(&sdk).await;
    let run_id = uniq("run");
    let out = run_destroy(&d, json!({"stack": stack, "stateBucket": bucket}), &run_id).await;
    let Outcome::Failed(f) = out else {
        panic!("a partial destroy must fail the execution")
    };
    assert_eq!(f.error, "DestroyIncomplete");

    let store = d.store(&bucket, "cdkd").await;
    let left = store
        .get_state(&stack, "us-east-1")
        .await
        .unwrap()
        .expect("record kept");
    let res = left.record.body["resources"].as_object().unwrap();
    let mut ids: Vec<&String> = res.keys().collect();
    ids.sort();
    assert_eq!(
        ids,
        vec!["Full", "Queue"],
        "the topic is deleted, the failed bucket and what it blocks stay"
    );
    assert!(
        sqs.get_queue_attributes()
            .queue_url(&url)
            .send()
            .await
            .is_ok(),
        "a blocked resource is not touched"
    );
    let report: RunReport = runs::read(&store, &runs::report_key("cdkd", &run_id))
        .await
        .unwrap()
        .unwrap();
    assert!(!report.complete);
    let rows = &report.stacks[0].rows;
    let by_id = |id: &str| {
        rows.iter()
            .find(|r| r.logical_id == id)
            .unwrap()
            .outcome
            .clone()
    };
    assert_eq!(by_id("Topic").label(), "deleted");
    assert_eq!(by_id("Full").label(), "failed");
    assert_eq!(
        by_id("Queue"),
        cdkd_core::destroy::model::RowOutcome::Blocked { by: "Full".into() }
    );
    // The lock is released even though the run failed.
    assert!(!h::list_all_keys(&s3, &bucket)
        .await
        .iter()
        .any(|k| k.ends_with("lock.json")));
}

#[tokio::test]
async fn destroy_workflow_refuses_a_held_lock_and_touches_nothing() {
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Locked");
    let sns = aws_sdk_sns::Client::new(&sdk);
    let topic = sns
        .create_topic()
        .name(uniq("t"))
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    let record = json!({"version": 10, "stackName": stack, "region": "us-east-1", "resources": {
        "Topic": {"physicalId": topic, "resourceType": "AWS::SNS::Topic", "properties": {}}}, "outputs": {}});
    put_record(&s3, &bucket, &stack, record.as_object().unwrap()).await;
    let now = h::now_ms();
    let lock = h::cdkd_lock_body("alice@laptop:42", now, now + 600_000, Some("deploy"));
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/us-east-1/lock.json"),
        lock.as_bytes(),
    )
    .await;

    let d = deps(&sdk).await;
    let out = run_destroy(
        &d,
        json!({"stack": stack, "stateBucket": bucket}),
        &uniq("run"),
    )
    .await;
    let Outcome::Failed(f) = out else {
        panic!("must refuse")
    };
    assert_eq!(f.error, "LockHeld");
    assert!(
        f.cause.contains("alice@laptop:42") && f.cause.contains("deploy"),
        "{}",
        f.cause
    );
    let live = sns.list_topics().send().await.unwrap();
    assert!(
        live.topics()
            .iter()
            .any(|t| t.topic_arn() == Some(topic.as_str())),
        "nothing deleted"
    );
    assert!(
        h::get_text(&s3, &bucket, &format!("cdkd/{stack}/us-east-1/lock.json"))
            .await
            .unwrap()
            .contains("alice")
    );
}

/// docs/runs.md, "Continuing in a new execution": with the history limit lowered to 100
/// events (3 waves an execution), a bucket whose delete S3 refuses with 503 SlowDown
/// three times keeps the run looping past the limit; each execution hands the run over
/// to a new one before it (recorded in progress.json), the lock goes along, and the last
/// execution finishes the destroy. Without continuing, the first execution would fail
/// with States.Runtime at event 100.
#[tokio::test]
async fn destroy_workflow_continues_in_a_new_execution_before_the_history_limit() {
    use cdkd_tests::faults::{inject_fault, Fault};
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let stack = uniq("Long");
    let slow = h::unique_bucket_name("slow");
    s3.create_bucket().bucket(&slow).send().await.unwrap();
    let record = json!({"version": 10, "stackName": stack, "region": "us-east-1", "resources": {
        "Slow": {"physicalId": slow, "resourceType": "AWS::S3::Bucket", "properties": {}, "provisionedBy": "sdk"}
    }, "outputs": {}});
    put_record(&s3, &bucket, &stack, record.as_object().unwrap()).await;
    let _fault =
        inject_fault(&Fault::new("DELETE", &format!("^/{slow}/?$"), 503, "SlowDown").times(3));

    let limit = 100;
    let mut d = deps(&sdk).await;
    d.budgets.history_limit = limit;
    d.budgets.max_attempts = 10;
    let sm = StateMachine::load(definitions::DESTROY, &definitions::local_substitutions())
        .expect("definition loads")
        .with_name("cdkd-flow-destroy");
    let events = Arc::new(std::sync::Mutex::new(Vec::<(String, u64, String)>::new()));
    let log = events.clone();
    let engine = Engine::new(
        Arc::new(LocalSteps::new(d.clone())),
        EngineOptions {
            time_scale: 0.05,
            history_limit: limit,
            ..EngineOptions::default()
        },
    )
    .with_observer(Arc::new(move |e: &cdkd_engine::Event| {
        log.lock()
            .unwrap()
            .push((e.execution.clone(), e.id, e.kind.name()))
    }));
    engine.register(engine.state_machine_arn(sm.name()), sm.clone());
    let run_id = uniq("run");
    let (out, executions) = cdkd_functions::local::run_continued(
        &engine,
        &sm,
        json!({"stack": stack, "stateBucket": bucket}),
        &run_id,
    )
    .await;
    let Outcome::Succeeded(report) = out else {
        panic!("the continued run must end destroyed: {out:?}")
    };
    assert_eq!(report["complete"], json!(true), "{report}");
    let waves = events
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, _, k)| k == "ChoiceStateEntered")
        .count();
    assert!(
        executions.len() >= 2,
        "the run continued: {executions:?} ({waves} choices; faults {:?})",
        cdkd_tests::faults::list_faults()
    );
    assert_eq!(executions[1], format!("{run_id}--2"));
    let events = events.lock().unwrap();
    for name in &executions {
        let mine: Vec<_> = events.iter().filter(|(n, _, _)| n == name).collect();
        assert!(
            mine.iter().all(|(_, id, _)| *id < limit),
            "{name} stayed under the limit"
        );
        assert_eq!(
            mine.last().unwrap().2,
            "ExecutionSucceeded",
            "{name} ended well"
        );
    }
    let store = d.store(&bucket, "cdkd").await;
    let progress: Value = runs::read(&store, &runs::progress_key("cdkd", &run_id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        progress["continuedAs"],
        json!(executions.last().unwrap()),
        "progress.json names the run's latest execution"
    );
    assert!(store
        .get_state(&stack, "us-east-1")
        .await
        .unwrap()
        .is_none());
    assert!(
        s3.head_bucket().bucket(&slow).send().await.is_err(),
        "the bucket is deleted"
    );
    assert!(!h::list_all_keys(&s3, &bucket)
        .await
        .iter()
        .any(|k| k.ends_with("lock.json")));
}
