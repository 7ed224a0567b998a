//! What planning an export costs, measured (not a timed test): seeds a three-level tree
//! of 500 resources on the emulator (records and uploaded templates in S3, an SSM
//! parameter the root passes to its child, a security group whose ingress rule must be
//! looked up), runs the `export-plan` step on it and prints the time and the AWS
//! requests by operation. The registry is read once per distinct type of the tree, so
//! `DescribeType` grows with the number of types, not of resources.
//!
//! The step runs in-process against the local emulator (moto, one request at a time):
//! AWS latency differs, so treat the time as an order of magnitude.
//!
//! Run: `make bench-export-plan` (or `scripts/with-emulator.sh target/debug/examples/export_plan_bench
//! [--resources 500] [--runs 3]` after `cargo build --workspace --all-targets`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use cdkd_aws::calls::CallCounter;
use cdkd_functions::export::plan::{run, PlanInput};
use cdkd_functions::Deps;
use serde_json::{json, Map, Value};

const REGION: &str = "us-east-1";
const PREFIX: &str = "cdkd";

/// Types the tree cycles through: (type, physical id of resource `i`, recorded properties).
fn sample(i: usize) -> (&'static str, String, Value) {
    match i % 18 {
        0 => ("AWS::S3::Bucket", format!("bench-bucket-{i}"), json!({})),
        1 => (
            "AWS::SQS::Queue",
            format!("https://sqs.us-east-1.amazonaws.com/123456789012/q{i}"),
            json!({}),
        ),
        2 => (
            "AWS::SNS::Topic",
            format!("arn:aws:sns:us-east-1:123456789012:t{i}"),
            json!({}),
        ),
        3 => ("AWS::IAM::Role", format!("role-{i}"), json!({})),
        4 => ("AWS::Lambda::Function", format!("fn-{i}"), json!({})),
        5 => ("AWS::DynamoDB::Table", format!("table-{i}"), json!({})),
        6 => ("AWS::Logs::LogGroup", format!("/bench/{i}"), json!({})),
        7 => ("AWS::SSM::Parameter", format!("/bench/p{i}"), json!({})),
        8 => (
            "AWS::Events::Rule",
            format!("arn:aws:events:us-east-1:123456789012:rule/r{i}"),
            json!({}),
        ),
        9 => (
            "AWS::IAM::ManagedPolicy",
            format!("arn:aws:iam::123456789012:policy/p{i}"),
            json!({}),
        ),
        10 => ("AWS::CloudWatch::Alarm", format!("alarm-{i}"), json!({})),
        11 => ("AWS::Kinesis::Stream", format!("stream-{i}"), json!({})),
        12 => ("AWS::ECR::Repository", format!("repo-{i}"), json!({})),
        13 => (
            "AWS::StepFunctions::StateMachine",
            format!("arn:aws:states:us-east-1:123456789012:stateMachine:m{i}"),
            json!({}),
        ),
        14 => (
            "AWS::SecretsManager::Secret",
            format!("arn:aws:secretsmanager:us-east-1:123456789012:secret:s{i}"),
            json!({}),
        ),
        15 => (
            "AWS::ApiGateway::Resource",
            format!("res{i}"),
            json!({"RestApiId": "api1"}),
        ),
        16 => (
            "AWS::Lambda::Permission",
            format!("sid{i}"),
            json!({"FunctionName": "fn-0"}),
        ),
        _ => (
            "AWS::EC2::Route",
            format!("rtb-0abc|10.{}.0.0/16", i % 250),
            json!({}),
        ),
    }
}

struct Stack {
    name: String,
    rows: Map<String, Value>,
    resources: Map<String, Value>,
    parameters: Value,
}

fn stack(name: &str, from: usize, count: usize) -> Stack {
    let mut rows = Map::new();
    let mut resources = Map::new();
    for i in from..from + count {
        let (ty, pid, props) = sample(i);
        let lid = format!("R{i}");
        rows.insert(
            lid.clone(),
            json!({"resourceType": ty, "physicalId": pid, "properties": props, "attributes": {}}),
        );
        resources.insert(lid, json!({"Type": ty}));
    }
    Stack {
        name: name.to_string(),
        rows,
        resources,
        parameters: json!({}),
    }
}

fn nest(parent: &mut Stack, lid: &str, params: Value) {
    parent.rows.insert(
        lid.to_string(),
        json!({"resourceType": "AWS::CloudFormation::Stack", "physicalId": format!("arn:aws:cloudformation:us-east-1:123456789012:stack/{lid}/1"), "properties": {}, "attributes": {}}),
    );
    parent.resources.insert(
        lid.to_string(),
        json!({"Type": "AWS::CloudFormation::Stack", "Properties": {"Parameters": params}}),
    );
}

async fn put(s3: &aws_sdk_s3::Client, bucket: &str, key: &str, body: String) {
    s3.put_object()
        .bucket(bucket)
        .key(key)
        .body(ByteStream::from(body.into_bytes()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("put {key}: {e:?}"));
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total = arg(&args, "--resources", 500);
    let runs = arg(&args, "--runs", 3).max(1);
    let url = std::env::var("AWS_ENDPOINT_URL").unwrap_or_default();
    assert!(
        url.starts_with("http://127.0.0.1:") || url.starts_with("http://localhost:"),
        "AWS_ENDPOINT_URL={url:?} is not the local emulator: run under scripts/with-emulator.sh"
    );
    let sdk = cdkd_aws::config::load_sdk_config(None, Some(REGION)).await;
    let deps = Deps::from_sdk(sdk.clone(), None).await;
    let s3_calls = CallCounter::new();
    let s3 = cdkd_aws::config::s3_client(&sdk);
    let bucket = format!(
        "bench-export-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let counted = aws_sdk_s3::Client::from_conf(
        s3.config()
            .to_builder()
            .interceptor(s3_calls.clone())
            .build(),
    );
    deps.buckets.insert(
        &bucket,
        cdkd_functions::deps::StateBucket::of_client(counted),
    );
    s3.create_bucket()
        .bucket(&bucket)
        .send()
        .await
        .expect("create bucket");

    // An SSM parameter the root passes to its child, and a security group whose ingress
    // rule has no recorded id (one lookup).
    let ssm = aws_sdk_ssm::Client::new(&sdk);
    let ssm_name = format!("/bench/{bucket}/name");
    ssm.put_parameter()
        .name(&ssm_name)
        .r#type(aws_sdk_ssm::types::ParameterType::String)
        .value("stored")
        .send()
        .await
        .expect("put parameter");
    let ec2 = cdkd_aws::ec2::Ec2::new(&sdk, Some(REGION), None).client;
    let vpc = ec2
        .create_vpc()
        .cidr_block("10.99.0.0/16")
        .send()
        .await
        .expect("vpc")
        .vpc
        .and_then(|v| v.vpc_id)
        .expect("vpc id");
    let group = ec2
        .create_security_group()
        .group_name(format!("bench-{bucket}"))
        .description("export plan bench")
        .vpc_id(vpc)
        .send()
        .await
        .expect("group")
        .group_id
        .expect("group id");
    ec2.authorize_security_group_ingress()
        .group_id(&group)
        .ip_protocol("tcp")
        .from_port(443)
        .to_port(443)
        .cidr_ip("10.0.0.0/8")
        .send()
        .await
        .expect("ingress");

    // Root (40%) > Middle (40%) > Leaf (the rest), plus the two nested-stack rows.
    let (a, b) = (total * 2 / 5, total * 2 / 5);
    let mut root = stack("BenchRoot", 0, a);
    let mut middle = stack("BenchRoot~Middle", a, b);
    let mut leaf = stack(
        "BenchRoot~Middle~Leaf",
        a + b,
        total.saturating_sub(a + b + 1),
    );
    leaf.rows.insert(
        "Ingress".into(),
        json!({"resourceType": "AWS::EC2::SecurityGroupIngress", "physicalId": format!("{group}|tcp|443|443"), "properties": {}, "attributes": {}}),
    );
    leaf.resources.insert(
        "Ingress".into(),
        json!({"Type": "AWS::EC2::SecurityGroupIngress"}),
    );
    root.parameters =
        json!({"Name": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": ssm_name}});
    nest(&mut root, "Middle", json!({"Name": {"Ref": "Name"}}));
    middle.parameters = json!({"Name": {"Type": "String"}});
    nest(&mut middle, "Leaf", json!({}));

    let run_id = "bench-run";
    let mut templates = BTreeMap::new();
    let mut resources = 0;
    let mut types = std::collections::BTreeSet::new();
    for s in [&root, &middle, &leaf] {
        types.extend(
            s.resources
                .values()
                .filter_map(|r| r["Type"].as_str())
                .filter(|t| *t != "AWS::CloudFormation::Stack")
                .map(str::to_string),
        );
        let mut rec =
            json!({"version": 10, "stackName": s.name, "region": REGION, "resources": s.rows});
        if let Some((parent, lid)) = s.name.rsplit_once('~') {
            rec["parentStack"] = json!(parent);
            rec["parentLogicalId"] = json!(lid);
        }
        put(
            &s3,
            &bucket,
            &format!("{PREFIX}/{}/{REGION}/state.json", s.name),
            rec.to_string(),
        )
        .await;
        let key = format!("{PREFIX}/_runs/{run_id}/templates/{}.json", s.name);
        let tpl = json!({"Parameters": s.parameters, "Resources": s.resources});
        put(&s3, &bucket, &key, tpl.to_string()).await;
        templates.insert(s.name.clone(), key);
        resources += s.resources.len();
    }

    println!(
        "export plan of {resources} template resources (2 of them nested-stack rows) over 3 stacks, {runs} run(s)"
    );
    let mut times = Vec::new();
    for i in 0..runs {
        let input: PlanInput = serde_json::from_value(json!({
            "input": {"stack": "BenchRoot", "stateBucket": bucket, "statePrefix": PREFIX,
                      "templates": templates, "dryRun": true},
            "runId": format!("{run_id}-{i}"),
        }))
        .expect("input");
        let before = s3_calls.snapshot();
        let started = Instant::now();
        let out = run(input, &deps)
            .await
            .unwrap_or_else(|e| panic!("plan failed: {e}"));
        let took = started.elapsed();
        times.push(took);
        let after = s3_calls.snapshot();
        let mut calls = out.aws_calls.clone();
        for (op, n) in after {
            let d = n - before.get(&op).copied().unwrap_or(0);
            if d > 0 {
                calls.insert(format!("s3:{op}"), d);
            }
        }
        println!(
            "run {}: {:.0} ms; stacks {}, import rows {}, blocked {}",
            i + 1,
            took.as_secs_f64() * 1000.0,
            out.stacks,
            out.import_rows,
            out.blocked
        );
        if i == 0 {
            println!("AWS requests by operation (first run):");
            for (op, n) in &calls {
                println!("  {op:<32} {n}");
            }
            println!("  {:<32} {}", "total", calls.values().sum::<u64>());
            println!(
                "distinct resource types: {}; DescribeType requests: {}",
                types.len(),
                out.aws_calls.get("DescribeType").copied().unwrap_or(0)
            );
        }
    }
    times.sort();
    let median: Duration = times[times.len() / 2];
    println!(
        "time: min {:.0} ms, median {:.0} ms",
        times[0].as_secs_f64() * 1000.0,
        median.as_secs_f64() * 1000.0
    );
}
