//! `state show` of a 2,500-resource record (target: well under 100 ms), plus the
//! `--json` and `state resources --long` renderings of the same record.
//! Run: `cargo bench -p cdkd-core --bench views`.

use cdkd_core::view::state::resources::{render_resources, ResourcesMode};
use cdkd_core::view::state::show::{show_json, show_text, ShowNode};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{Map, Value};

/// A record shaped like a large cdkd stack: 2,500 resources with properties,
/// attributes and dependencies, outputs and skipped outputs.
pub fn big_record(n: usize) -> Map<String, Value> {
    let mut resources = String::new();
    for i in 0..n {
        if i > 0 {
            resources.push(',');
        }
        resources.push_str(&format!(
            r#""Resource{i:04}ABCDEF":{{"physicalId":"arn:aws:sqs:us-east-1:123456789012:queue-{i}","resourceType":"AWS::SQS::Queue","properties":{{"QueueName":"queue-{i}","VisibilityTimeout":30,"Tags":[{{"Key":"env","Value":"prod"}}],"RedrivePolicy":{{"deadLetterTargetArn":"arn:dlq","maxReceiveCount":5}}}},"attributes":{{"Arn":"arn:aws:sqs:us-east-1:123456789012:queue-{i}","QueueUrl":"https://sqs.us-east-1.amazonaws.com/123456789012/queue-{i}"}},"dependencies":["Resource{:04}ABCDEF"],"provisionedBy":"sdk"}}"#,
            i.saturating_sub(1)
        ));
    }
    let text = format!(
        r#"{{"version":10,"stackName":"BigStack","region":"us-east-1","resources":{{{resources}}},"outputs":{{"A":"x","B":["y"]}},"skippedOutputs":{{"C":"0123456789abcdef"}},"lastModified":1777458225000}}"#
    );
    match cdkd_core::json::parse_json(text.as_bytes()) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn bench(c: &mut Criterion) {
    let node = ShowNode {
        stack: "BigStack".into(),
        region: "us-east-1".into(),
        record: big_record(2500),
        lock: None,
        children: Vec::new(),
    };
    let mut g = c.benchmark_group("views_2500_resources");
    g.sample_size(20);
    g.bench_function("state_show_text", |b| {
        b.iter(|| show_text(&node, 1_767_225_600_000))
    });
    g.bench_function("state_show_json", |b| b.iter(|| show_json(&node)));
    g.bench_function("state_resources_long", |b| {
        b.iter(|| render_resources("BigStack", "us-east-1", &node.record, ResourcesMode::Long))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
