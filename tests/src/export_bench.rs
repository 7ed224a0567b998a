//! What `make bench-export` measures (tests/examples/export_bench.rs) and the CLI's
//! request-budget test pins: an export run as a user runs it (`cdkd-flow export <stack>
//! ... --local -y`, without `--fast`) on a stack seeded here with real emulator
//! resources, and what it cost: the wall time, the requests the emulator received while
//! it ran (every signed request of every client: the emulator counts them,
//! `/_cdkd_emulator/requests`, docs/emulator.md "Request counts") and the time
//! CloudFormation itself spent on the run's operations (from the stacks' events).
//!
//! Shapes (docs/testing.md, "The export benchmark (make bench-export)"): a flat stack of N resources cycling through the
//! OracleStack fixture's importable types (S3 bucket, SNS topic, IAM role, SQS queue, SSM
//! parameter), and a root with a queue and N nested children with a topic each, read
//! from a cloud assembly written here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

use crate as h;

pub const REGION: &str = "us-east-1";

/// The OracleStack fixture's logical ids of its importable resources, in its order.
const ORACLE_IDS: [&str; 5] = [
    "Bucket83908E77",
    "TopicBFC7AF6E",
    "Role1ABCC5F0",
    "Queue4A7E3555",
    "Param165332EC",
];

const TRUST: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;

/// A seeded export: the stack, its state bucket and the template arguments of the
/// command (`--template F` or `--cdk-out D`).
#[derive(Debug, Clone)]
pub struct Seeded {
    pub case: String,
    pub stack: String,
    pub bucket: String,
    pub source: Vec<String>,
    /// Resources in the records (nested-stack rows left out), stacks in the tree.
    pub resources: usize,
    pub stacks: usize,
}

fn uniq(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).expect("json"))
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// A flat stack of `n` real resources shaped like the OracleStack fixture (resource `i`
/// of the type `i % 5` in its order: bucket, topic, role, queue, parameter, the parameter
/// holding a queue's URL), its record in a fresh bucket and its template (with the
/// fixture's Outputs) in `dir`.
pub async fn flat(case: &str, n: usize, dir: &Path) -> Seeded {
    let stack = uniq("BenchFlat");
    let tag = stack.to_lowercase();
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let iam = aws_sdk_iam::Client::new(&sdk);
    let ssm = aws_sdk_ssm::Client::new(&sdk);
    let clients = Clients {
        sdk: &sdk,
        s3: &s3,
        iam: &iam,
        ssm: &ssm,
    };
    let mut rows = serde_json::Map::new();
    let mut resources = serde_json::Map::new();
    let mut outputs = serde_json::Map::new();
    let mut last_queue: Option<(String, String)> = None;
    for i in 0..n {
        let round = i / 5;
        let logical = if round == 0 {
            ORACLE_IDS[i % 5].to_string()
        } else {
            format!("{}{round}", ORACLE_IDS[i % 5])
        };
        let (ty, pid, props, tpl_props, attrs, deps) =
            flat_resource(i, &tag, &logical, &clients, &mut last_queue).await;
        if round == 0 {
            let out = [
                "BucketName",
                "TopicArn",
                "RoleName",
                "QueueUrl",
                "ParamName",
            ][i % 5];
            outputs.insert(out.into(), json!({"Value": {"Ref": logical}}));
        }
        rows.insert(
            logical.clone(),
            json!({"resourceType": ty, "physicalId": pid, "properties": props, "attributes": attrs,
                   "dependencies": deps, "provisionedBy": "sdk"}),
        );
        resources.insert(logical, json!({"Type": ty, "Properties": tpl_props}));
    }
    let record = json!({"version": 10, "stackName": stack, "region": REGION, "resources": rows,
                        "lastModified": 1777458225000i64});
    let bucket = h::fresh_bucket(&s3).await;
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{stack}/{REGION}/state.json"),
        serde_json::to_vec(&record).expect("json"),
    )
    .await;
    std::fs::create_dir_all(dir).expect("template dir");
    let path = dir.join(format!("{stack}.template.json"));
    write_json(&path, &json!({"Resources": resources, "Outputs": outputs}));
    Seeded {
        case: case.into(),
        stack,
        bucket,
        source: vec!["--template".into(), path.to_string_lossy().into_owned()],
        resources: n,
        stacks: 1,
    }
}

/// The clients that seed the flat stack's resources.
struct Clients<'a> {
    sdk: &'a aws_config::SdkConfig,
    s3: &'a aws_sdk_s3::Client,
    iam: &'a aws_sdk_iam::Client,
    ssm: &'a aws_sdk_ssm::Client,
}

/// One seeded row: its type, physical id, recorded properties, template properties,
/// attributes and dependencies.
type FlatRow = (&'static str, String, Value, Value, Value, Value);

/// Creates the flat stack's resource `i` (logical id `logical`), of the type `i % 5`;
/// `last_queue` is the latest queue's logical id and URL, which a parameter holds.
async fn flat_resource(
    i: usize,
    tag: &str,
    logical: &str,
    c: &Clients<'_>,
    last_queue: &mut Option<(String, String)>,
) -> FlatRow {
    match i % 5 {
        0 => {
            let name = format!("{tag}-b{i}");
            h::create_bucket(c.s3, &name).await;
            (
                "AWS::S3::Bucket",
                name.clone(),
                json!({}),
                json!({"BucketName": name}),
                json!({"Arn": format!("arn:aws:s3:::{name}")}),
                json!([]),
            )
        }
        1 => {
            let name = format!("{tag}-t{i}");
            let arn = h::fixtures::topic(c.sdk, &name).await;
            (
                "AWS::SNS::Topic",
                arn,
                json!({"DisplayName": "bench topic"}),
                json!({"TopicName": name, "DisplayName": "bench topic"}),
                json!({"TopicName": name}),
                json!([]),
            )
        }
        2 => {
            let name = format!("{tag}-r{i}");
            c.iam
                .create_role()
                .role_name(&name)
                .assume_role_policy_document(TRUST)
                .send()
                .await
                .unwrap_or_else(|e| panic!("create role {name}: {e:?}"));
            let trust: Value = serde_json::from_str(TRUST).expect("trust");
            (
                "AWS::IAM::Role",
                name.clone(),
                json!({"AssumeRolePolicyDocument": trust}),
                json!({"RoleName": name, "AssumeRolePolicyDocument": trust}),
                json!({"Arn": format!("arn:aws:iam::{}:role/{name}", h::EMULATOR_ACCOUNT)}),
                json!([]),
            )
        }
        3 => {
            let name = format!("{tag}-q{i}");
            let url = h::fixtures::queue(c.sdk, &name).await;
            *last_queue = Some((logical.to_string(), url.clone()));
            (
                "AWS::SQS::Queue",
                url,
                json!({}),
                json!({"QueueName": name}),
                json!({"QueueName": name}),
                json!([]),
            )
        }
        _ => {
            let name = format!("/{tag}/p{i}");
            let (queue_id, url) = last_queue.clone().expect("a queue comes first");
            c.ssm
                .put_parameter()
                .name(&name)
                .value(&url)
                .r#type(aws_sdk_ssm::types::ParameterType::String)
                .send()
                .await
                .unwrap_or_else(|e| panic!("put parameter {name}: {e:?}"));
            (
                "AWS::SSM::Parameter",
                name.clone(),
                json!({"Name": name, "Type": "String", "Value": url}),
                json!({"Name": name, "Type": "String", "Value": {"Ref": queue_id}}),
                json!({}),
                json!([queue_id]),
            )
        }
    }
}

/// A root with a queue (Output `QueueUrl`) and `children` nested children with a topic
/// each (Output `TopicArn`): the records in a fresh bucket, a cloud assembly in `dir`
/// (manifest, root template, one nested template per child named by its
/// `aws:asset:path`).
pub async fn tree(case: &str, children: usize, dir: &Path) -> Seeded {
    let root = uniq("BenchTree");
    let tag = root.to_lowercase();
    let sdk = h::sdk().await;
    let s3 = h::s3().await;
    let bucket = h::fresh_bucket(&s3).await;
    let out = dir.join(format!("{root}.out"));
    std::fs::create_dir_all(&out).expect("assembly dir");
    let queue_url = h::fixtures::queue(&sdk, &format!("{tag}-work")).await;
    let mut root_rows = json!({"Queue": {"resourceType": "AWS::SQS::Queue", "physicalId": queue_url,
        "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}});
    let mut root_tpl = json!({"Resources": {"Queue": {"Type": "AWS::SQS::Queue",
        "Properties": {"QueueName": format!("{tag}-work")}}},
        "Outputs": {"QueueUrl": {"Value": {"Ref": "Queue"}}}});
    for i in 1..=children {
        let logical = format!("Child{i}");
        let name = format!("{root}~{logical}");
        let topic_name = format!("{tag}-events{i}");
        let topic = h::fixtures::topic(&sdk, &topic_name).await;
        root_rows[&logical] = json!({"resourceType": "AWS::CloudFormation::Stack",
            "physicalId": format!("arn:aws:cloudformation:{REGION}:{}:stack/{root}-{logical}/1", h::EMULATOR_ACCOUNT),
            "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"});
        let file = format!("{logical}.nested.template.json");
        root_tpl["Resources"][&logical] = json!({"Type": "AWS::CloudFormation::Stack",
            "Properties": {"TemplateURL": format!("https://example.invalid/{file}")},
            "Metadata": {"aws:asset:path": file, "aws:asset:property": "TemplateURL"}});
        let rec = json!({"version": 10, "stackName": name, "region": REGION,
            "parentStack": root, "parentLogicalId": logical,
            "resources": {"Topic": {"resourceType": "AWS::SNS::Topic", "physicalId": topic,
                "properties": {}, "attributes": {}, "dependencies": [], "provisionedBy": "sdk"}},
            "lastModified": 1777458225000i64});
        h::put_raw(
            &s3,
            &bucket,
            &format!("cdkd/{name}/{REGION}/state.json"),
            serde_json::to_vec(&rec).expect("json"),
        )
        .await;
        write_json(
            &out.join(&file),
            &json!({"Resources": {"Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": topic_name}}},
                    "Outputs": {"TopicArn": {"Value": {"Ref": "Topic"}}}}),
        );
    }
    let rec = json!({"version": 10, "stackName": root, "region": REGION, "resources": root_rows,
                     "lastModified": 1777458225000i64});
    h::put_raw(
        &s3,
        &bucket,
        &format!("cdkd/{root}/{REGION}/state.json"),
        serde_json::to_vec(&rec).expect("json"),
    )
    .await;
    let template_file = format!("{root}.template.json");
    write_json(&out.join(&template_file), &root_tpl);
    write_json(&out.join("cdk.out"), &json!({"version": "38.0.1"}));
    write_json(
        &out.join("manifest.json"),
        &json!({"version": "38.0.1", "artifacts": {root.clone(): {
            "type": "aws:cloudformation:stack",
            "environment": format!("aws://{}/{REGION}", h::EMULATOR_ACCOUNT),
            "properties": {"templateFile": template_file}}}}),
    );
    Seeded {
        case: case.into(),
        stack: root,
        bucket,
        source: vec!["--cdk-out".into(), out.to_string_lossy().into_owned()],
        resources: 1 + children,
        stacks: 1 + children,
    }
}

/// Requests of one service, action and S3 object kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestCount {
    pub service: String,
    pub action: String,
    pub object: String,
    pub count: u64,
}

/// What one export run cost.
#[derive(Debug, Clone)]
pub struct Measured {
    pub seeded: Seeded,
    pub run_id: String,
    pub exit_code: i32,
    pub stderr: String,
    pub wall_ms: f64,
    pub requests: Vec<RequestCount>,
    /// CloudFormation's own time: per stack operation, its first `*_IN_PROGRESS` stack
    /// event to its `*_COMPLETE` (milliseconds), summed, and how many there were.
    pub cfn_ms: f64,
    pub cfn_operations: usize,
}

impl Measured {
    pub fn total(&self) -> u64 {
        self.requests.iter().map(|r| r.count).sum()
    }

    /// Requests by service.
    pub fn by_service(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for r in &self.requests {
            *m.entry(r.service.clone()).or_default() += r.count;
        }
        m
    }

    /// Requests by `service:action`.
    pub fn by_action(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for r in &self.requests {
            *m.entry(format!("{}:{}", r.service, r.action)).or_default() += r.count;
        }
        m
    }

    /// Requests of one `service:action`, any object.
    pub fn count(&self, service: &str, action: &str) -> u64 {
        self.requests
            .iter()
            .filter(|r| r.service == service && r.action == action)
            .map(|r| r.count)
            .sum()
    }
}

/// A raw request to the emulator's own endpoint; the response body.
async fn emulator_call(method: &str, path: &str) -> String {
    let resp = h::emulator_request(method, path, "", "").await;
    resp.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// Resets the emulator's request counts.
pub async fn reset_requests() {
    emulator_call("DELETE", "/_cdkd_emulator/requests").await;
}

/// The emulator's request counts since the last reset.
pub async fn requests() -> Vec<RequestCount> {
    let body = emulator_call("GET", "/_cdkd_emulator/requests").await;
    let v: Value = serde_json::from_str(&body).expect("request counts");
    v["requests"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| RequestCount {
                    service: r["service"].as_str().unwrap_or("").into(),
                    action: r["action"].as_str().unwrap_or("").into(),
                    object: r["object"].as_str().unwrap_or("").into(),
                    count: r["count"].as_u64().unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The time CloudFormation spent on the operations of the stacks tagged as run
/// `run_id`'s: per stack, each first `*_IN_PROGRESS` stack event (not
/// `REVIEW_IN_PROGRESS`, not a cleanup) to the next `*_COMPLETE`. (milliseconds, count)
pub async fn cfn_operation_time(run_id: &str) -> (f64, usize) {
    let cfn = crate::cfn::client().await;
    let mut names = Vec::new();
    let mut pages = cfn.describe_stacks().into_paginator().send();
    while let Some(page) = pages.next().await {
        let page = page.expect("describe stacks");
        for s in page.stacks() {
            let ours = s.tags().iter().any(|t| {
                t.key() == Some(cdkd_core::export::resume::RUN_TAG) && t.value() == Some(run_id)
            });
            if ours {
                names.push(s.stack_name().unwrap_or_default().to_string());
            }
        }
    }
    let (mut total, mut ops) = (0f64, 0usize);
    for name in names {
        let mut events = Vec::new();
        let mut pages = cfn
            .describe_stack_events()
            .stack_name(&name)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.expect("describe stack events");
            for e in page.stack_events() {
                if e.logical_resource_id() != Some(name.as_str()) {
                    continue;
                }
                let (Some(t), Some(st)) = (e.timestamp(), e.resource_status()) else {
                    continue;
                };
                let ms = t.secs() as f64 * 1000.0 + t.subsec_nanos() as f64 / 1e6;
                events.push((ms, st.as_str().to_string()));
            }
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut open: Option<f64> = None;
        for (ms, st) in events {
            if st.ends_with("_IN_PROGRESS") && st != "REVIEW_IN_PROGRESS" && !st.contains("CLEANUP")
            {
                open.get_or_insert(ms);
            } else if st.ends_with("_COMPLETE") {
                if let Some(from) = open.take() {
                    total += ms - from;
                    ops += 1;
                }
            }
        }
    }
    (total, ops)
}

/// Runs `cdkd-flow --state-bucket B export <stack> <source> --local -y --run-id R` (the
/// binary `bin`, no `--fast`) and measures it.
pub async fn measure(bin: &Path, seeded: Seeded) -> Measured {
    let run_id = uniq("bench-").to_lowercase();
    let mut args: Vec<&str> = vec!["--state-bucket", &seeded.bucket, "export", &seeded.stack];
    args.extend(seeded.source.iter().map(String::as_str));
    args.extend(["--local", "-y", "--run-id", &run_id]);
    reset_requests().await;
    let t0 = Instant::now();
    let run = h::run_bin_env(bin, &args, &[]);
    let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let requests = requests().await;
    let (cfn_ms, cfn_operations) = cfn_operation_time(&run_id).await;
    Measured {
        seeded,
        run_id,
        exit_code: run.code,
        stderr: run.stderr,
        wall_ms,
        requests,
        cfn_ms,
        cfn_operations,
    }
}

/// Where the seeds write their templates: `<target>/tmp/export_bench`.
pub fn scratch_dir(target: &Path) -> PathBuf {
    target.join("tmp").join("export_bench")
}
